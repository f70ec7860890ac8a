"""Which target architectures can capture aux hidden states in which engine version, and which
physical layer boundaries each engine version actually feeds to the drafter's `fc`.

A *boundary* b is the residual stream entering target layer b (HF `hidden_states[b]`); b = N is the
final pre-norm state. Trainers and engines number aux layers two ways (input-of-layer b, or
output-of-layer b-1); everything here is converted to boundaries so they can be compared.
Sources: SGLang wheels 0.4.6.post5 … 0.5.23 (`set_eagle3_layers_to_capture` in `sglang/srt/models/*.py`),
vLLM wheels 0.8.5 … 0.33.0 (`_get_eagle3_aux_layers_from_config` in `v1/worker/gpu_model_runner.py`),
TensorRT-LLM@00679c66 `modeling_speculative.py`; sgl-project/sglang PR #25454 and #32334, vllm-project/vllm PR #43671.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- SGLang: targets with set_eagle3_layers_to_capture, and the release that added it: engines/sglang.py -----
from .sglang import CAPTURE_SINCE as SGLANG_CAPTURE_SINCE  # noqa: E402
from .spec import in_release_range

SGLANG_CAPTURE_CITE = "sglang/srt/models/*.py set_eagle3_layers_to_capture, per wheel 0.4.6.post5 … 0.5.23"
# DeepSeek-family targets number explicit ids differently (PR #25454, in 0.5.16+)
SGLANG_DEEPSEEK_FAMILY = {
    "DeepseekV2ForCausalLM",
    "DeepseekV3ForCausalLM",
    "DeepseekV32ForCausalLM",
    "Glm4MoeLiteForCausalLM",
    "KimiK25ForConditionalGeneration",
}

# --- vLLM: classes implementing SupportsEagle3 in 0.32 (0.33 adds GraniteMoe*) --------------------
VLLM_V32_SUPPORTED = set(
    """AfmoeForCausalLM ApertusForCausalLM Cohere2MoeForCausalLM DeepseekForCausalLM DeepseekV2ForCausalLM
    DeepseekV3ForCausalLM DeepseekV32ForCausalLM DeepseekV4ForCausalLM DeepseekV41ForCausalLM Ernie4_5ForCausalLM
    Gemma4ForCausalLM GlmMoeDsaForCausalLM GptOssForCausalLM GraniteForCausalLM GraniteSWAForCausalLM
    IQuestCoderForCausalLM InternLM3ForCausalLM K2HorizonForCausalLM KimiK25ForConditionalGeneration
    KimiK3ForConditionalGeneration KimiLinearForCausalLM LagunaForCausalLM Llama4ForCausalLM LlamaForCausalLM
    LLaMAForCausalLM MiMoForCausalLM MiMoV2ForCausalLM MiMoV2FlashForCausalLM MiniCPMForCausalLM MiniCPM3ForCausalLM
    MiniMaxM2ForCausalLM Ministral3ForCausalLM MistralForCausalLM MistralLarge3ForCausalLM NemotronHForCausalLM
    NemotronHPuzzleForCausalLM Phi3ForCausalLM Plamo3ForCausalLM Qwen2ForCausalLM Qwen3ForCausalLM
    Qwen3MoeForCausalLM Qwen3NextForCausalLM SarvamMLAForCausalLM Step1ForCausalLM TeleChat2ForCausalLM
    TeleChat3ForCausalLM TeleFLMForCausalLM Qwen2_5_VLForConditionalGeneration Qwen3VLForConditionalGeneration
    Qwen3_5ForCausalLM Gemma4ForConditionalGeneration LlavaForConditionalGeneration PixtralForConditionalGeneration
    Mistral3ForConditionalGeneration Llama4ForConditionalGeneration""".split()
)
VLLM_V33_ADDED = {"GraniteMoeForCausalLM", "GraniteMoeSharedForCausalLM"}
from .vllm import SUPPORTS_EAGLE3_SINCE as VLLM_SUPPORTS_EAGLE3_SINCE  # noqa: E402  (vLLM 0.17+, per architecture)

VLLM_DEEPSEEK_FAMILY = {a for a in VLLM_V32_SUPPORTED if a.startswith(("Deepseek", "Kimi", "K2Horizon", "GlmMoeDsa", "SarvamMLA"))}
# before 0.17: a config-level allow-list, substring match on the target's model_type: Era.capture_model_types

TRTLLM_CAPTURE_CITE = "tensorrt_llm/_torch/models/modeling_speculative.py @ 00679c66 (capture at the end of each layer)"


def _between(v: str, lo: str, hi: str | None) -> bool:
    return in_release_range(v, lo, hi)


@dataclass
class Capture:
    supported: bool | None  # None = unknown architecture for this engine table
    support_note: str
    ids_used: list[int] | None  # the ids the engine reads (None = its default)
    ids_source: str
    boundaries: list[int] | None  # physical boundaries fed to fc, in order
    notes: list[str]
    cite: str


def default_boundaries(n: int) -> list[int]:
    """[2, N//2, N-3]: the common physical default (input-of-layer numbering)."""
    return [2, n // 2, n - 3]


def engine_capture(
    engine: str, version: str, arch: str | None, model_type: str | None, n_layers: int, top_ids: list[int] | None, ec_ids: list[int] | None
) -> Capture:
    """What this engine version captures for this target and this drafter's ids."""
    notes: list[str] = []
    arch = arch or ""
    if engine == "sglang":
        since = SGLANG_CAPTURE_SINCE.get(arch)
        if since is None:
            sup, note = False, f"{arch} has no set_eagle3_layers_to_capture in any SGLang release we read (0.4.6–0.5.23)"
        elif _between(version, since, None):
            sup, note = True, f"{arch} captures aux states since SGLang {since}"
        else:
            sup, note = False, f"{arch} gained set_eagle3_layers_to_capture only in SGLang {since}"
        ids, src = ec_ids, "eagle_config.eagle_aux_hidden_state_layer_ids"
        if ids is None and top_ids is not None:
            notes.append("SGLang reads capture ids only from eagle_config; the top-level eagle_aux_hidden_state_layer_ids is ignored")
        if ids is not None and _between(version, "0.5.5", "0.5.10"):
            notes.append(
                "SGLang 0.5.5.post3–0.5.10 reset capture to the default layers at CUDA-graph init (no-arg call), ignoring the draft's ids (fixed by #22836)"
            )
            ids, src = None, "ignored (reset to default)"
        if ids is None:
            loop = default_boundaries(n_layers)
            src = src if src.startswith("ignored") else "engine default [2, N//2, N-3]"
        elif arch in SGLANG_DEEPSEEK_FAMILY and _between(version, "0.5.16", None):
            loop = [i + 1 for i in ids] if ids and ids[0] == 1 else list(ids)
            notes.append("DeepSeek-family target on SGLang ≥ 0.5.16: +1 only when the first id is 1 (#25454)")
        else:
            loop = [i + 1 for i in ids]
        # capture happens before layer i for i in range(N): boundary N is unreachable, repeats collapse
        b = sorted({i for i in loop if 0 <= i < n_layers})
        if any(i >= n_layers for i in loop):
            notes.append(f"boundary {n_layers} (after the last layer) cannot be captured by SGLang's loop: it is silently missing")
        return Capture(sup, note, ids, src, b, notes, SGLANG_CAPTURE_CITE)

    if engine == "vllm":
        from .registry import ENGINES

        era = next((e for e in ENGINES["vllm"] if _between(version, e.first, e.last)), ENGINES["vllm"][-1])
        if era.capture_model_types is None:  # from 0.17: the model runner asks the class (SupportsEagle3)
            since = VLLM_SUPPORTS_EAGLE3_SINCE.get(arch) or ("0.33.0" if arch in VLLM_V33_ADDED else None)
            ok = since is not None and _between(version, since, None)
            sup, note = (
                ok,
                (
                    f"{arch} implements SupportsEagle3 in vLLM {version} (since {since})"
                    if ok
                    else f"{arch} does not implement SupportsEagle3 in vLLM {version}"
                    + (f" (only from {since})" if since else "")
                    + ": RuntimeError at load"
                ),
            )
        else:
            allow = era.capture_model_types
            mt = (model_type or "").lower()
            ok = any(a in mt for a in allow)
            sup, note = ok, f"vLLM {version} allows EAGLE-3 targets whose model_type contains one of {list(allow)} (got {model_type!r})"
        if _between(version, "0.32.0", None):
            ids = top_ids if top_ids is not None else ec_ids
            src = "top-level ids" if top_ids is not None else "eagle_config ids" if ec_ids is not None else "engine default (2, N//2, N-3)"
        elif _between(version, "0.11.0", None):
            ids, src = top_ids, "top-level ids" if top_ids is not None else "engine default (2, N//2, N-3)"
            if top_ids is None and ec_ids is not None:
                notes.append(f"vLLM {version} reads only the top-level eagle_aux_hidden_state_layer_ids; eagle_config ids are ignored")
        else:
            ids, src = None, "engine default (2, N//2, N-3): this version ignores configured ids"
        chosen = list(ids) if ids is not None else default_boundaries(n_layers)
        b = sorted(set(chosen))
        if len(b) < len(chosen):
            notes.append(f"vLLM stores the ids as a sorted set: {chosen} collapses to {b}")
        last_ok = arch not in VLLM_DEEPSEEK_FAMILY
        if not last_ok and n_layers in b:
            notes.append(f"boundary {n_layers} is never captured on DeepSeek-family targets in vLLM (#46788)")
            b = [i for i in b if i != n_layers]
        b = [i for i in b if 0 <= i <= n_layers]
        return Capture(sup, note, ids, src, b, notes, "vllm/model_executor/models/interfaces.py, v1/worker/gpu_model_runner.py")

    if engine == "trtllm":
        ids = ec_ids
        src = "eagle_config ids (assumed)" if ids is not None else "engine default (1, N//2-1, N-4) output-of-layer"
        chosen = [i + 1 for i in ids] if ids is not None else default_boundaries(n_layers)
        return Capture(None, "TensorRT-LLM target capture support is not tabled here", ids, src, chosen, notes, TRTLLM_CAPTURE_CITE)
    return Capture(None, "unknown engine", None, "", None, notes, "")

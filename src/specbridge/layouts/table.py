"""Producer/consumer layouts as data: how each names the canonical drafter's tensors and config.

The canonical tensor names are speculators' (`layers.{i}.…`, `fc.weight`, `norm.weight`,
`lm_head.weight`, `embed_tokens.weight`, `d2t`, `t2d`). A layout is a list of prefix renames from
canonical to its own names, plus how it writes config.json. Adding a layout is adding a row.
"""

from __future__ import annotations

from ..record import field, record

# Aux-layer id conventions (speculators/EAGLE/vLLM count boundaries, SpecForge/ModelOpt/SGLang explicit ids count
# layer outputs; sgl-project/sglang PR #25454):
INPUT_OF_LAYER = "input-of-layer"  # id i = residual stream entering target layer i (HF hidden_states[i])
OUTPUT_OF_LAYER = "output-of-layer"  # id i = output of target layer i (HF hidden_states[i+1])


@record
class Layout:
    name: str
    summary: str
    # canonical prefix -> layout prefix, tried in order; names matching none are kept as they are.
    prefixes: tuple[tuple[str, str], ...]
    config_style: str  # "speculators" | "flat-eagle3" | "research" | "nemo"
    architecture: str
    aux_convention: str
    aux_ids_where: str  # "top-level" | "eagle_config" | "none"
    single_layer_only: bool = False  # `midlayer.` has no layer index
    writes_t2d: bool = True
    vocab_map_only_if_reduced: bool = True  # d2t/t2d only when Vd < V
    sources: tuple[str, ...] = field(default_factory=tuple)


MIDLAYER = (("layers.0.", "midlayer."),)
NEMO_PREFIXES = (
    ("embed_tokens.", "model.embed_tokens."),
    ("fc.", "model.fc."),
    ("fc_norm.", "model.fc_norm."),
    ("input_norm.", "model.input_norm."),
    ("layers.", "model.layers."),
    ("norm.", "model.norm."),
)

LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in [
        Layout(
            "speculators",
            "vllm-project/speculators: decoder under layers.N.*, speculators_config + transformer_layer_config",
            (),
            "speculators",
            "Eagle3Speculator",
            INPUT_OF_LAYER,
            "top-level",
            sources=("speculators 0.9.0 src/speculators/models/eagle3/{config,core}.py; fixture speculators-0.9.0/train-save",),
        ),
        Layout(
            "sglang",
            "SGLang <= 0.5.11 / SpecForge export: decoder under midlayer.*, flat LlamaForCausalLMEagle3 config",
            MIDLAYER,
            "flat-eagle3",
            "LlamaForCausalLMEagle3",
            OUTPUT_OF_LAYER,
            "eagle_config",
            single_layer_only=True,
            vocab_map_only_if_reduced=False,
            sources=("SpecForge 0.2.0 specforge/export/to_sglang.py; sglang 0.5.11 srt/models/llama_eagle3.py",),
        ),
        Layout(
            "vllm",
            "vLLM / SGLang >= 0.5.12 / ModelOpt >= 2026-03: decoder under layers.N.*, flat LlamaForCausalLMEagle3 config",
            (),
            "flat-eagle3",
            "LlamaForCausalLMEagle3",
            INPUT_OF_LAYER,
            "top-level",
            sources=("vllm 0.32.0 model_executor/models/llama_eagle3.py; transformers_utils/configs/eagle.py",),
        ),
        Layout(
            "eagle",
            "SafeAILab/EAGLE research: midlayer.*, plain LlamaForCausalLM config + draft_vocab_size",
            MIDLAYER,
            "research",
            "LlamaForCausalLM",
            INPUT_OF_LAYER,
            "none",
            single_layer_only=True,
            sources=("SafeAILab/EAGLE@cb7e084 eagle/traineagle3/{config.json,cnets.py,main.py}",),
        ),
        Layout(
            "trtllm",
            "ModelOpt export for TensorRT-LLM: midlayer.*, LlamaForCausalLMEagle3 + eagle_config, no t2d",
            MIDLAYER,
            "flat-eagle3",
            "LlamaForCausalLMEagle3",
            OUTPUT_OF_LAYER,
            "eagle_config",
            single_layer_only=True,
            writes_t2d=False,
            sources=(
                "TensorRT-Model-Optimizer@5a4242f modelopt/torch/export/plugins/hf_spec_export.py",
                "TensorRT-LLM@00679c6 tensorrt_llm/_torch/models/modeling_speculative.py",
            ),
        ),
        Layout(
            "nemo",
            "NeMo Automodel LlamaEagle3DraftModel: model.-prefixed keys except lm_head/d2t/t2d",
            NEMO_PREFIXES,
            "nemo",
            "LlamaEagle3DraftModel",
            OUTPUT_OF_LAYER,
            "none",
            sources=("NVIDIA-NeMo/Automodel@36044ad nemo_automodel/components/speculative/eagle/draft_llama.py",),
        ),
    ]
}


def to_layout(canonical_name: str, layout: Layout) -> str:
    for canon, mine in layout.prefixes:
        if canonical_name.startswith(canon):
            return mine + canonical_name[len(canon) :]
    return canonical_name


def to_canonical(name: str, layout: Layout) -> str:
    # longest layout prefix first, so `model.layers.` wins over `model.`
    for canon, mine in sorted(layout.prefixes, key=lambda p: -len(p[1])):
        if name.startswith(mine):
            return canon + name[len(mine) :]
    return name

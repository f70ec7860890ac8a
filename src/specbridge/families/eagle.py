"""An EAGLE-1/2 drafter described as itself: fc over (embedding, target feature), its decoder layers, whether layer 0
has an input norm (EAGLE's cnets.py skips it), and whether embedding and head are shipped. Config and headers only."""

from __future__ import annotations

from ..checkpoint.reader import Checkpoint
from ..later import Later
from .reading import TargetFit, config_int, tensor_shape

LAYER = Later(r"^(?:model\.)?layers\.(\d+)\.")


def geometry(ckpt: Checkpoint) -> dict:
    cfg = ckpt.config or {}
    shape = {n.removeprefix("model."): tuple(t.shape) for n, t in ckpt.tensors.items()}
    fc = shape.get("fc.weight")
    return {
        "hidden_size": fc[0] if fc else cfg.get("hidden_size"),
        "fc": list(fc) if fc else None,
        "fc_bias": "fc.bias" in shape,
        "layers_in_keys": len({m.group(1) for n in ckpt.tensors if (m := LAYER.match(n))}),
        "layers_in_config": cfg.get("num_hidden_layers"),
        "layer0_input_layernorm": "layers.0.input_layernorm.weight" in shape,
        "embed_tokens": "shipped" if "embed_tokens.weight" in shape else "shared from the target",
        "lm_head": "shipped" if "lm_head.weight" in shape else "the target's",
        "vocab_size": cfg.get("vocab_size"),
        "bias_flag": cfg.get("bias"),
    }


def speculators_tokens(cfg: dict) -> int | None:
    """The tokens a speculators-format drafter says it drafts per step: `speculators_config.proposal_methods[0]
    .speculative_tokens`, what vLLM's speculators translation reads as num_speculative_tokens
    (vllm/transformers_utils/configs/speculators/base.py @ 0.27.0–0.32.0); None when absent or not a positive integer."""
    spec = (cfg or {}).get("speculators_config")
    methods = spec.get("proposal_methods") if isinstance(spec, dict) else None
    first = methods[0] if isinstance(methods, list) and methods and isinstance(methods[0], dict) else {}
    v = first.get("speculative_tokens")
    return v if type(v) is int and v > 0 else None


EAGLE1_FIT = (
    "fc reads cat(embedding, the target's last hidden state) and is built [hidden_size, 2 × hidden_size] from the "
    "drafter's config (vllm/model_executor/models/llama_eagle.py EagleLlamaForCausalLM); vLLM's proposer allocates its "
    "hidden_states buffer at the draft's hidden size and copies the target's states into it at the first draft step "
    "(vllm/v1/spec_decode/llm_base_proposer.py: hidden_size = draft_model_config.get_hidden_size(); "
    "self.hidden_states[:num_tokens] = target_hidden_states, read in the 0.32.0 wheel), a copy torch refuses between "
    "widths (the RuntimeError is inferred: no conformance run feeds a target of another width)"
)


def target_fit(ckpt: Checkpoint) -> TargetFit | None:
    """An EAGLE-1/2 drafter takes the target's last hidden state at its own `hidden_size` (fc's rows when the config
    does not say)."""
    width, key = config_int(ckpt.config or {}, "hidden_size")
    if width is not None:
        return TargetFit(width, f"config {key}", EAGLE1_FIT)
    fc = tensor_shape(ckpt, "fc.weight")
    return TargetFit(fc[0], "fc.weight rows", EAGLE1_FIT) if fc and len(fc) == 2 else None

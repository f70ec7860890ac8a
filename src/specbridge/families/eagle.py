"""An EAGLE-1/2 drafter described as itself: fc over (embedding, target feature), its decoder layers, whether layer 0
has an input norm (EAGLE's cnets.py skips it), and whether embedding and head are shipped. Config and headers only."""

from __future__ import annotations

import re

from ..checkpoint.reader import Checkpoint

LAYER = re.compile(r"^(?:model\.)?layers\.(\d+)\.")


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

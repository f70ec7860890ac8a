"""A Medusa checkpoint described as itself, and its whole structure as detection reads it: per-head residual blocks
and per-head vocabulary heads, in one of the layouts producers write. A `blocks.N.` name alone is not Medusa (a timm
ViT has `blocks.N.attn.*`): a head is a block *and* its lm head under the same number. Config and headers only.

Layouts (vllm/model_executor/models/medusa.py @ 0.32.0 load_weights and _remap_old_checkpoint_key):
FasterDecoding's medusa_lm_head.pt `{h}.{l}.linear.weight` + `{h}.{L}.weight`; the HF Medusa model's
`medusa_head.{h}.{l}.linear.weight` + `medusa_head.{h}.{L}.weight`; vLLM's own names ("blocks") `blocks.{h}.layers.{l}.weight` +
`lm_heads.{h}.weight`, optionally under `medusa_heads.`."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..checkpoint.reader import Checkpoint
from ..later import Later
from .reading import TargetFit, config_int

# (layout, block regex, head regex): each with the head number as group 1; "model." is read as optional
LAYOUTS = (
    ("fasterdecoding", Later(r"^(\d+)\.(\d+)\.linear\.weight$"), Later(r"^(\d+)\.(\d+)\.weight$")),
    ("medusa_head", Later(r"^medusa_head\.(\d+)\.(\d+)\.linear\.weight$"), Later(r"^medusa_head\.(\d+)\.(\d+)\.weight$")),
    (
        "blocks",
        Later(r"^(?:medusa_heads\.)?blocks\.(\d+)\.layers\.(\d+)\.weight$"),
        Later(r"^(?:medusa_heads\.)?lm_heads\.(\d+)\.weight$"),
    ),
)


def heads(names: Iterable[str]) -> tuple[str, list[int], int] | None:
    """(layout, the head numbers that have both a residual block and a vocabulary head, residual layers per head), or
    None when no head is whole in any layout: the structure that names a Medusa checkpoint."""
    stripped = [n.removeprefix("model.") for n in names]
    for layout, block, head in LAYOUTS:
        blocks: dict[int, set[int]] = {}
        for n in stripped:
            if m := block.fullmatch(n):
                blocks.setdefault(int(m.group(1)), set()).add(int(m.group(2)))
        if not blocks:
            continue
        # FasterDecoding's head is {h}.{L}.weight with L the number of residual layers (one past the last block)
        heads_ = {
            int(m.group(1))
            for n in stripped
            if (m := head.fullmatch(n)) and (layout == "blocks" or int(m.group(2)) not in blocks.get(int(m.group(1)), ()))
        }
        whole = sorted(set(blocks) & heads_)
        if whole:
            return layout, whole, max(len(v) for v in blocks.values())
    return None


def geometry(ckpt: Checkpoint) -> dict:
    cfg = ckpt.config or {}
    shape = {n.removeprefix("model."): tuple(t.shape) for n, t in ckpt.tensors.items()}
    found = heads(shape)
    layout, numbers, layers = found if found else (None, [], 0)
    head = next(
        (
            s
            for n, s in shape.items()
            if re.match(r"^(?:medusa_heads\.)?lm_heads?\.(?:\d+\.)?weight$|^(?:medusa_head\.)?\d+\.\d+\.weight$", n) and len(s) == 2
        ),
        None,
    )
    return {
        "layout": layout,
        "heads_in_keys": len(numbers),
        "heads_in_config": cfg.get("medusa_num_heads", cfg.get("num_heads")),
        "residual_layers_in_keys": layers,
        "residual_layers_in_config": cfg.get("medusa_num_layers", cfg.get("num_hidden_layers")),
        "hidden_size": head[1] if head else cfg.get("hidden_size"),
        "head_vocab": head[0] if head else None,
        "vocab_size": cfg.get("vocab_size"),
        "truncated_vocab_size": cfg.get("truncated_vocab_size"),
        "token_map": "token_map" in shape,
        "fc_bias": any(n.endswith(".bias") for n in shape),
        "original_lm_head": bool(cfg.get("original_lm_head")),
    }


# a head's first residual block, in the layouts vLLM's Medusa loader reads (blocks.N.layers.0, the research N.0.linear,
# either under medusa_heads. / medusa_head.)
BLOCK = Later(r"^(?:medusa_heads?\.)?(?:blocks\.)?\d+\.(?:layers\.)?0(?:\.linear)?\.weight$")

MEDUSA_FIT = (
    "every head's ResidualBlock is nn.Linear(hidden_size, hidden_size) built from the Medusa config and applied to the "
    "target's last hidden state (vllm/model_executor/models/medusa.py ResidualBlock.forward, Medusa.forward: "
    "[block(hidden_states) for block in self.blocks], read in the 0.32.0 wheel), a matmul torch refuses between widths at "
    "the first draft step (the RuntimeError is inferred: no conformance run feeds a target of another width)"
)


def target_fit(ckpt: Checkpoint) -> TargetFit | None:
    """A Medusa head takes the target's last hidden state at the config's `hidden_size` (a residual block's width when
    the config does not say)."""
    width, key = config_int(ckpt.config or {}, "hidden_size")
    if width is not None:
        return TargetFit(width, f"config {key}", MEDUSA_FIT)
    block = next((tuple(t.shape) for n, t in ckpt.tensors.items() if BLOCK.match(n)), None)
    return TargetFit(block[1], "a residual block's input", MEDUSA_FIT) if block and len(block) == 2 else None

"""A Medusa checkpoint described as itself, for what it reads from its target: each head is a stack of residual blocks
over the target's last hidden state, then an LM head. Config and tensor headers only."""

from __future__ import annotations

import re

from ..checkpoint.reader import Checkpoint
from .fit import TargetFit, config_int

# a head's first residual block, in the layouts vLLM's Medusa loader reads (blocks.N.layers.0, the research N.0.linear,
# either under medusa_heads. / medusa_head.)
BLOCK = re.compile(r"^(?:medusa_heads?\.)?(?:blocks\.)?\d+\.(?:layers\.)?0(?:\.linear)?\.weight$")

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

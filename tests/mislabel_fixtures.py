"""Mislabelled drafters: one family's tensors under another family's architecture name, and an EAGLE-3 layout with
another kind of fc. Built from the family fixtures (tests/dflash_fixtures.py, zoo_fixtures.py, eagle1_fixtures.py) with
only the name or the fc changed, so each differs from a drafter that loads by exactly that."""

from __future__ import annotations

import dflash_fixtures as df
import eagle1_fixtures as e1
import numpy as np
import zoo_fixtures as z


def cases() -> dict[str, tuple[dict, dict]]:
    """name → (config, tensors)."""
    fc2 = z.qwen3_tensors() | {"fc.weight": np.zeros((z.H, 2 * z.H), np.float32), "fc.bias": np.zeros(z.H, np.float32)}
    fc1 = z.qwen3_tensors() | {"fc.weight": np.zeros((z.H, z.H), np.float32)}
    return {
        # z-lab's DFlash layout (model-level hidden_norm, q_proj over H) named as an EAGLE-3 drafter
        "dflash-as-eagle3": (df.config(architectures=["LlamaForCausalLMEagle3"]), df.tensors()),
        # a Qwen3 EAGLE-3 drafter (per-layer hidden_norm, q_proj over 2H) named as a DFlash drafter
        "eagle3-as-dflash": (z.qwen3_config(architectures=["DFlashDraftModel"]), z.qwen3_tensors()),
        # the same with a dflash_config (its three target layers fit the EAGLE-3 fc's width): the load gets to the layers
        "eagle3-as-dflash-configured": (
            z.qwen3_config(architectures=["DFlashDraftModel"], dflash_config={"target_layer_ids": [0, 1, 2], "mask_token_id": z.V - 1}),
            z.qwen3_tensors(),
        ),
        # EAGLE's research layout (fc [H, 2H] with a bias, no hidden_norm) named as an EAGLE-3 drafter
        "eagle1-as-eagle3": (e1.config(architectures=["LlamaForCausalLMEagle3"]), e1.tensors()),
        # a Qwen3 EAGLE-3 drafter whose fc is EAGLE-1's ([H, 2H] with a bias) or reads one state ([H, H])
        "eagle3-fc-eagle1": (z.qwen3_config(), fc2),
        "eagle3-fc-1x": (z.qwen3_config(), fc1),
    }

"""What a checkpoint holds, as the names the engine rows' expressions read beside their class's config fields.

A leaf below both the checkpoint view (view.py works the facts out once per checkpoint) and the simulator (which hands
them to the rows): kept in simulate.py, the view and the simulator imported each other."""

from __future__ import annotations

from ..checkpoint.reader import Checkpoint
from ..checkpoint.sidefiles import MASK_FILE


def checkpoint_facts(ckpt: Checkpoint) -> dict[str, bool]:
    """What the checkpoint holds, as names the rows' expressions read beside the config fields."""
    names = list(ckpt.tensors)
    return {
        "has_embed": any(n.endswith("embed_tokens.weight") for n in names),
        "has_head": any(n.endswith("lm_head.weight") for n in names),
        "has_d2t": any("d2t" in n for n in names),
        "has_mask_hidden": any("mask_hidden" in n for n in names),
        # a side file beside the weights the engine reads by name (DFlash's mask embedding)
        "has_mask_file": ckpt.root.is_dir() and (ckpt.root / MASK_FILE).is_file(),
        # Medusa's reduced draft vocabulary: the ids its heads' rows stand for (vLLM medusa.py load_weights)
        "has_token_map": any(n.removeprefix("medusa_heads.") == "token_map" for n in names),
        # the target's vocabulary size: None here; check of a family other than EAGLE-3 fills it from --target (rows
        # whose classes compare the draft vocabulary with the target's read it: DFlash's draft_id_to_target_id)
        "Vt": None,
        # the target's decoder layers and routed experts (vLLM's get_num_layers / is_moe): None here; check of a family
        # other than EAGLE-3 fills them from --target (DeepSeek's EAGLE class counts its layers after the target's)
        "Nt": None,
        "Et": None,
    }


# every name a row may read besides its class's fields and derives: the checkpoint facts, the layer / aux index
ROW_NAMES = ("has_embed", "has_head", "has_d2t", "has_mask_hidden", "has_mask_file", "has_token_map", "Vt", "Nt", "Et", "i", "j")

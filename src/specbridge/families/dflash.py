"""A DFlash drafter described as itself: its own geometry (draft layers, the target layers it reads and how they
are numbered, block size, mask token, side files, whether embedding and head are shipped or shared), read from
config.json and tensor headers only."""

from __future__ import annotations

from ..checkpoint.reader import Checkpoint
from ..checkpoint.sidefiles import MASK_FILE
from ..later import Later
from .reading import TargetFit, config_int, tensor_shape

LAYER = Later(r"^(?:model\.)?layers\.(\d+)\.")
SIDE_FILES = (MASK_FILE,)


def _get(cfg: dict, *paths: str):
    """The first present value among key paths ("dflash_config.mask_token_id"), with the path it came from."""
    for p in paths:
        cur = cfg
        for part in p.split("."):
            cur = cur.get(part) if isinstance(cur, dict) else None
        if cur is not None:
            return cur, p
    return None, None


# the target layers fc reads, as layer outputs counted from 0: dflash_config's, else DSpark's dspark_target_layer_ids,
# else a top-level list (a dense DSpark's, Muse Glimmer's): vLLM's order after its eagle ids (eagle3_utils.py
# get_eagle3_aux_layers_from_config @ 0.27.0 … 0.32.0); SGLang's DFlashDraftModel reads dflash_config's, else the
# top-level list (dflash_utils.py parse_dflash_draft_config), and its DSpark worker dspark_target_layer_ids before both
# (dspark_config.py parse_dspark_draft_config, every release from 0.5.16 read)
TARGET_IDS = ("dflash_config.target_layer_ids", "dspark_target_layer_ids", "target_layer_ids")


def target_layer_ids(cfg: dict) -> tuple[object, str | None]:
    """The drafter's target layer ids (layer outputs, 0-based) and the key path they came from."""
    return _get(cfg or {}, *TARGET_IDS)


BLOCK_SIZE = ("dflash_config.block_size", "block_size")  # SGLang's precedence (dflash_utils.parse_dflash_draft_config)


def block_size(cfg: dict) -> int | None:
    """The drafter's trained block (anchor + mask slots), a positive integer, or None."""
    v, _ = _get(cfg or {}, *BLOCK_SIZE)
    return v if type(v) is int and v > 0 else None


def geometry(ckpt: Checkpoint) -> dict:
    cfg = ckpt.config or {}
    names = list(ckpt.tensors)
    shape = {n.removeprefix("model."): tuple(t.shape) for n, t in ckpt.tensors.items()}
    fc = shape.get("fc.weight")
    ids, ids_where = _get(
        cfg, "dflash_config.target_layer_ids", "eagle_aux_hidden_state_layer_ids", "dspark_target_layer_ids", "target_layer_ids"
    )
    mask, mask_where = _get(cfg, "dflash_config.mask_token_id", "mask_token_id")
    block, block_where = _get(cfg, *BLOCK_SIZE)
    root = ckpt.root if ckpt.root.is_dir() else ckpt.root.parent
    return {
        "hidden_size": fc[0] if fc else cfg.get("hidden_size"),
        "draft_layers_in_keys": len({m.group(1) for n in names if (m := LAYER.match(n))}),
        "draft_layers_in_config": cfg.get("num_hidden_layers"),
        "fc": list(fc) if fc else None,
        "target_layer_ids": ids,
        "target_layer_ids_where": ids_where,
        # dflash_config.target_layer_ids count target layers from 0 (the output of layer i); vLLM adds 1 to turn them
        # into its boundary ids (vllm-project/vllm #40727), and so for DSpark's dspark_target_layer_ids / top-level
        # target_layer_ids (eagle3_utils.py get_eagle3_aux_layers_from_config @ 0.32.0); the eagle ids are boundaries
        "target_layer_numbering": "layer outputs, 0-based (engine boundary = id + 1)"
        if ids_where not in (None, "eagle_aux_hidden_state_layer_ids")
        else ("boundaries (as EAGLE-3's aux ids)" if ids_where else None),
        "block_size": block,
        "block_size_where": block_where,
        "mask_token_id": mask,
        "mask_token_id_where": mask_where,
        "side_files": [f for f in SIDE_FILES if (root / f).is_file()],
        "embed_tokens": "shipped" if "embed_tokens.weight" in shape else "shared from the target",
        "lm_head": "shipped" if "lm_head.weight" in shape else "shared from the target",
        "draft_vocab_size": cfg.get("draft_vocab_size")
        or (shape["lm_head.weight"][0] if "lm_head.weight" in shape else cfg.get("vocab_size")),
        "vocab_size": cfg.get("vocab_size"),
        "q_k_norms": any(".q_norm." in n for n in names),
    }


DFLASH_FIT = (
    "vLLM builds fc [hidden_size, {key} × k] from the drafter's config (qwen3_dflash.py: target_hidden_size, else "
    "hidden_size) and its combine_hidden_states raises at the first draft step when the k target states it is fed are "
    "another width: 'ValueError: DFlash drafter expects N concatenated aux hidden features but received M' "
    "(vllm/model_executor/models/qwen3_dflash.py DFlashQwen3ForCausalLM.combine_hidden_states, read in the 0.29.0 and "
    "0.32.0 wheels; the load itself reports nothing); SGLang's DFlashDraftModel sizes fc from hidden_size alone"
)


def target_fit(ckpt: Checkpoint) -> TargetFit | None:
    """A DFlash, DFlash2 or DSpark drafter takes k target states of `target_hidden_size` (else `hidden_size`) each: the
    width fc is built for. Neither written: fc's input over the number of target layer ids."""
    cfg = ckpt.config or {}
    width, key = config_int(cfg, "target_hidden_size", "hidden_size")
    if width is not None:
        return TargetFit(width, f"config {key}", DFLASH_FIT.format(key=key))
    fc, (ids, where) = tensor_shape(ckpt, "fc.weight"), target_layer_ids(cfg)
    if fc and len(fc) == 2 and isinstance(ids, list) and ids and fc[1] % len(ids) == 0:
        return TargetFit(
            fc[1] // len(ids), f"fc.weight input {fc[1]} over the {len(ids)} {where}", DFLASH_FIT.format(key="the state width")
        )
    return None

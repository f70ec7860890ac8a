"""The checkpoint's other files (tokenizer, generation_config.json, chat template, README): carried into a
converted copy byte for byte, so the copy serves as the original did.

A conversion writes config.json and the weights; everything else beside them belongs to the model, not to
its layout. Weights in other files (an optimizer state, a second .safetensors) are not carried: engines
glob `*.safetensors` in a directory without an index, so a stray one would be loaded as part of the drafter.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..checkpoint.assemble import PICKLE_SUFFIXES
from ..checkpoint.write import HEADER_BACKUP_SUFFIX
from .backup import CONFIG_BACKUP, is_temp

# what a conversion writes itself (config, index) or reads as weights: never copied over it
OWN_NAMES = {"config.json", CONFIG_BACKUP}
INDEX_SUFFIXES = (".safetensors.index.json", ".bin.index.json")  # a weights index: the conversion writes its own
WEIGHT_SUFFIXES = (".safetensors", ".gguf", ".h5", ".msgpack", ".npz", ".npy", ".onnx", *PICKLE_SUFFIXES)


def side_files(src, written: set[str]) -> tuple[dict[str, Path], list[tuple[str, str]]]:
    """({name: file to copy}, [(name, why it is not copied)]) for the source checkpoint `src`: every plain
    file beside the weights that is neither weights nor what the conversion writes (`written`: the plan's own
    side files, e.g. mask_embedding.pt). A Hub source offers what the HF cache holds at its commit."""
    if src.hub is not None:
        return _hub_side_files(src, written)
    root = src.root if src.root.is_dir() else src.root.parent
    return _sort_out({entry: root / entry for entry in sorted(os.listdir(root))}, {f.name for f in src.weight_files}, written)


def _sort_out(files: dict[str, Path], weights: set[str], written: set[str]) -> tuple[dict[str, Path], list[tuple[str, str]]]:
    """`files` (name: path) split into those to copy and those left out with the reason the report shows."""
    copy: dict[str, Path] = {}
    skipped: list[tuple[str, str]] = []
    for name, path in files.items():
        why = _not_copied(name, path, weights, written)
        if why is None:
            copy[name] = path
        elif why:
            skipped.append((name, why))
    return copy, skipped


def _not_copied(name: str, path: Path, weights: set[str], written: set[str]) -> str | None:
    """Why `name` is not copied: "" when it is the checkpoint itself or a specbridge file (not worth
    saying), a reason the report shows otherwise, None when it is copied."""
    if name in OWN_NAMES or name in weights or name in written or name.endswith((HEADER_BACKUP_SUFFIX, *INDEX_SUFFIXES)) or is_temp(name):
        return ""
    if path.is_dir():
        return "a directory: convert carries the files beside the weights, not subdirectories"
    if not path.is_file():
        return "not a regular file"
    if name.lower().endswith(WEIGHT_SUFFIXES):
        return "weights the conversion does not read: an engine would load a stray weights file as part of the drafter"
    return None


def _hub_side_files(src, written: set[str]) -> tuple[dict[str, Path], list[tuple[str, str]]]:
    """A Hub source's other files as the HF cache holds them at the commit converted (nothing is downloaded:
    the reader fetched only config.json and read the weights by range)."""
    from ..checkpoint.hub import cached_snapshot_files

    return _sort_out(cached_snapshot_files(src.hub), {f.name for f in src.weight_files}, written)


def hub_note(src) -> str | None:
    """What a Hub source's conversion leaves out, and the command that fetches it."""
    if src.hub is None:
        return None
    ref = src.hub
    return (
        f"a Hub source: its other files (tokenizer, generation_config.json, …) are copied only where the HF cache holds them "
        f"at {ref.commit}; fetch the rest with `hf download {ref.repo_id} --revision {ref.commit} --exclude '*.safetensors' "
        "--local-dir DST`"
    )

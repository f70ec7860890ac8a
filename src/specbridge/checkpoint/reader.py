"""Open a drafter checkpoint (directory, single file or sharded index) from headers alone.

Pickled weights (`pytorch_model.bin`, `.pt`) are never unpickled: a checkpoint from the hub or a
colleague's scratch dir is untrusted input. Torch zip checkpoints are described by
checkpoint/torchzip.py's allowlist interpreter instead, which runs nothing; safetensors win when both
are present. A path that does not exist but reads as `org/name[@revision]` is opened on the Hub
(checkpoint/hub.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from .assemble import (
    MAX_INDEX_BYTES,
    Checkpoint,
    assemble_shards,
    choose_weights,
    is_pickle,
    read_json,
    read_weights,
    shard_name_ok,
)
from .errors import CheckpointError
from .hubref import hub_ref_or_none, missing_path_line
from .safetensors import TensorInfo


def _inside(root: Path, name: str, index_path: Path) -> Path:
    """Resolve a shard name (already held to `shard_name_ok`), refusing a symlink that leaves the directory."""
    target = (root / name).resolve()
    if not target.is_relative_to(root.resolve()):
        raise CheckpointError(index_path, f"weight_map file {name!r} resolves outside the checkpoint directory (symlink?)")
    return target


def _load_sharded(root: Path, index_path: Path) -> tuple[dict[str, TensorInfo], list[Path], dict[str, str]]:
    """A sharded directory, through the same assembly (and checks) as a sharded Hub repository."""

    def read_shard(fname: str) -> tuple[dict[str, TensorInfo], dict[str, str], Path]:
        shard_name_ok(fname, index_path)
        path = _inside(root, fname, index_path)
        if not path.is_file():
            raise CheckpointError(index_path, f"shard {fname!r} listed in the index does not exist")
        return (*read_weights(path), path)

    return assemble_shards(index_path, read_json(index_path, MAX_INDEX_BYTES), read_shard)


def open_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Open `path`: a directory, a `.safetensors` or torch zip file, an index json, a config.json
    beside weights — or, when no such path exists, a Hub id `org/name[@revision]`."""
    p = Path(path)
    if not p.exists():
        ref = hub_ref_or_none(os.fspath(path))
        if ref is not None:
            from .hub import open_hub_checkpoint  # here: a local checkpoint needs none of the Hub client (~2 ms)

            return open_hub_checkpoint(ref)
        raise CheckpointError(os.fspath(path), missing_path_line(os.fspath(path)))
    root = p if p.is_dir() else p.parent
    kind: str | None = None
    chosen: Path | None = None
    if p.is_file():
        if p.name.endswith(".index.json"):
            kind, chosen = "index", p
        elif p.suffix == ".safetensors" or is_pickle(p):
            kind, chosen = "single", p
        elif p.name != "config.json":
            raise CheckpointError(p, "not a checkpoint: expected a directory, a .safetensors or torch file, or an index .json")
    if kind is None:
        names = [f.name for f in root.iterdir() if f.is_file()] if root.is_dir() else []
        kind, name = choose_weights(names, root)
        chosen = root / name
    assert chosen is not None

    if kind == "index":
        tensors, files, meta = _load_sharded(root, chosen)
    else:
        tensors, meta = read_weights(chosen)
        files = [chosen]
    storage = ("torch-zip" if is_pickle(files[0]) else "safetensors") + ("-sharded" if kind == "index" else "")
    used = {f.resolve() for f in files}
    pickles = sorted(f for f in root.iterdir() if f.is_file() and is_pickle(f) and f.resolve() not in used) if root.is_dir() else []

    config_path = root / "config.json"
    if not config_path.is_file():
        if (root / "adapter_config.json").is_file():  # PEFT writes adapter_config.json, never config.json
            from ..families.not_drafter import adapter_dir_line

            raise CheckpointError(root, adapter_dir_line(root, read_json(root / "adapter_config.json")))
        raise CheckpointError(root, "no config.json beside the weights (the engines need it to build the drafter)")
    config = read_json(config_path)
    return Checkpoint(root, config, config_path, tensors, files, storage, meta, pickles)

"""Open a drafter checkpoint (directory, single file or sharded index) from headers alone.

Pickled weights (`pytorch_model.bin`, `.pt`) are listed but never unpickled: a checkpoint from the
hub or a colleague's scratch dir is untrusted input.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CheckpointError
from .safetensors import TensorInfo, read_header

MAX_CONFIG_BYTES = 16 * 1024 * 1024
MAX_INDEX_BYTES = 64 * 1024 * 1024
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")
INDEX_NAME = "model.safetensors.index.json"


@dataclass
class Checkpoint:
    """Everything a checker needs, without tensor data."""

    root: Path
    config: dict | None
    config_path: Path | None
    tensors: dict[str, TensorInfo]
    weight_files: list[Path]
    storage: str  # "safetensors" | "safetensors-sharded"
    metadata: dict[str, str] = field(default_factory=dict)
    pickles: list[Path] = field(default_factory=list)  # present, never read

    @property
    def total_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors.values())


def read_json(path: Path, limit: int = MAX_CONFIG_BYTES) -> dict:
    try:
        size = path.stat().st_size
        if size > limit:
            raise CheckpointError(path, f"{size} bytes exceeds the {limit}-byte limit for a JSON file")
        raw = path.read_bytes()
    except OSError as e:
        raise CheckpointError(path, f"cannot read: {e.strerror or e}") from None
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise CheckpointError(path, "not valid UTF-8") from None
    except (json.JSONDecodeError, RecursionError) as e:
        raise CheckpointError(path, f"invalid JSON: {getattr(e, 'msg', e)} (line {getattr(e, 'lineno', '?')})") from None
    if not isinstance(obj, dict):
        raise CheckpointError(path, "expected a JSON object")
    return obj


def _inside(root: Path, name: str, index_path: Path) -> Path:
    """Resolve a shard name from an index, refusing anything that leaves the checkpoint directory."""
    if not isinstance(name, str) or not name or "\x00" in name:
        raise CheckpointError(index_path, f"weight_map names an invalid file {name!r}")
    p = Path(name)
    if p.is_absolute() or ".." in p.parts:
        raise CheckpointError(index_path, f"weight_map file {name!r} points outside the checkpoint directory")
    target = (root / p).resolve()
    if not target.is_relative_to(root.resolve()):
        raise CheckpointError(index_path, f"weight_map file {name!r} resolves outside the checkpoint directory (symlink?)")
    return target


def _load_sharded(root: Path, index_path: Path) -> tuple[dict[str, TensorInfo], list[Path], dict]:
    index = read_json(index_path, MAX_INDEX_BYTES)
    wmap = index.get("weight_map")
    if not isinstance(wmap, dict) or not wmap:
        raise CheckpointError(index_path, "no weight_map in the index")
    files: dict[str, Path] = {}
    for fname in dict.fromkeys(wmap.values()):
        files[fname] = _inside(root, fname, index_path)
    tensors: dict[str, TensorInfo] = {}
    meta: dict[str, str] = {}
    for fname, fpath in files.items():
        if not fpath.is_file():
            raise CheckpointError(index_path, f"shard {fname!r} listed in the index does not exist")
        header = read_header(fpath)
        meta.update(header.metadata)
        for name, info in header.tensors.items():
            if name in tensors:
                raise CheckpointError(fpath, f"tensor {name!r} appears in more than one shard")
            tensors[name] = info
    for name, fname in wmap.items():
        if name not in tensors:
            raise CheckpointError(index_path, f"index lists {name!r} in {fname!r} but that shard has no such tensor")
        if tensors[name].file != files[fname]:
            raise CheckpointError(index_path, f"index puts {name!r} in {fname!r} but it is in {tensors[name].file.name!r}")
    extra = set(tensors) - set(wmap)
    if extra:
        raise CheckpointError(index_path, f"shards hold {len(extra)} tensor(s) the index does not list, e.g. {sorted(extra)[0]!r}")
    return tensors, list(files.values()), meta


def open_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Open `path`: a directory, a `.safetensors` file, an index json, or a config.json beside weights."""
    p = Path(path)
    if not p.exists():
        raise CheckpointError(p, "no such file or directory")
    root = p if p.is_dir() else p.parent
    single: Path | None = None
    index_path: Path | None = None
    if p.is_file():
        if p.name.endswith(".index.json"):
            index_path = p
        elif p.suffix == ".safetensors":
            single = p
        elif p.name == "config.json":
            pass
        elif p.suffix in PICKLE_SUFFIXES:
            raise CheckpointError(p, "pickled PyTorch weights are never unpickled (they can run code); convert them to safetensors first")
        else:
            raise CheckpointError(p, "not a checkpoint: expected a directory, a .safetensors file or an index .json")

    pickles = sorted(f for f in root.iterdir() if f.is_file() and f.suffix in PICKLE_SUFFIXES) if root.is_dir() else []
    if single is None and index_path is None:
        if (root / INDEX_NAME).is_file():
            index_path = root / INDEX_NAME
        elif (root / "model.safetensors").is_file():
            single = root / "model.safetensors"
        else:
            found = sorted(root.glob("*.safetensors"))
            indexes = sorted(root.glob("*.safetensors.index.json"))
            if len(indexes) == 1:
                index_path = indexes[0]
            elif len(found) == 1:
                single = found[0]
            elif found:
                raise CheckpointError(root, f"{len(found)} .safetensors files but no {INDEX_NAME} to say which belong together")
            elif pickles:
                names = ", ".join(f.name for f in pickles)
                raise CheckpointError(
                    root, f"only pickled weights ({names}); they are never unpickled (they can run code): convert them to safetensors first"
                )
            else:
                raise CheckpointError(root, "no weights found (no .safetensors file or index)")

    if index_path is not None:
        tensors, files, meta = _load_sharded(root, index_path)
        storage = "safetensors-sharded"
    else:
        assert single is not None
        header = read_header(single)
        tensors, files, meta, storage = header.tensors, [single], header.metadata, "safetensors"

    config_path = root / "config.json"
    if not config_path.is_file():
        raise CheckpointError(root, "no config.json beside the weights (the engines need it to build the drafter)")
    config = read_json(config_path)
    return Checkpoint(root, config, config_path, tensors, files, storage, meta, pickles)

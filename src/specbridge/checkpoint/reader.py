"""Open a drafter checkpoint (directory, single file or sharded index) from headers alone.

Pickled weights (`pytorch_model.bin`, `.pt`) are never unpickled: a checkpoint from the hub or a
colleague's scratch dir is untrusted input. Torch zip checkpoints are described by
checkpoint/torchzip.py's allowlist interpreter instead, which runs nothing; safetensors win when both
are present. A path that does not exist but reads as `org/name[@revision]` is opened on the Hub
(checkpoint/hub.py).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CheckpointError
from .safetensors import TensorInfo, read_header
from .source import LocalSource

MAX_CONFIG_BYTES = 16 * 1024 * 1024
MAX_INDEX_BYTES = 64 * 1024 * 1024
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")
INDEX_NAME = "model.safetensors.index.json"
TORCH_INDEX_NAME = "pytorch_model.bin.index.json"
TORCH_SINGLE = "pytorch_model.bin"


@dataclass
class Checkpoint:
    """Everything a checker needs, without tensor data."""

    root: Path
    config: dict | None
    config_path: Path | None
    tensors: dict[str, TensorInfo]
    weight_files: list[Path]
    storage: str  # "safetensors" | "safetensors-sharded" | "torch-zip" | "torch-zip-sharded"
    metadata: dict[str, str] = field(default_factory=dict)
    pickles: list[Path] = field(default_factory=list)  # present, never read
    hub: object | None = None  # a checkpoint.hub.HubRef when opened from the Hub (repo, revision, commit)

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


def is_pickle(path: Path) -> bool:
    return path.suffix in PICKLE_SUFFIXES


def read_weights(path: Path) -> tuple[dict[str, TensorInfo], dict[str, str]]:
    """One weights file's tensors and metadata: a safetensors header, or a torch zip's pickle
    interpreted without running it."""
    if is_pickle(path):
        from .torchzip import read_torch_zip

        z = read_torch_zip(LocalSource.of(path))
        return z.tensors, z.metadata
    header = read_header(path)
    return header.tensors, header.metadata


def choose_weights(names: list[str], where: Path) -> tuple[str, str]:
    """Which of a directory's (or Hub repo's) files hold the weights: ("index" | "single", name).
    Safetensors first, like transformers; torch zip checkpoints only when there are none."""
    found = sorted(n for n in names if n.endswith(".safetensors") and "/" not in n)
    indexes = sorted(n for n in names if n.endswith(".safetensors.index.json") and "/" not in n)
    pickles = sorted(n for n in names if Path(n).suffix in PICKLE_SUFFIXES and "/" not in n)
    if INDEX_NAME in names:
        return "index", INDEX_NAME
    if "model.safetensors" in names:
        return "single", "model.safetensors"
    if len(indexes) == 1:
        return "index", indexes[0]
    if len(found) == 1:
        return "single", found[0]
    if found:
        raise CheckpointError(where, f"{len(found)} .safetensors files but no {INDEX_NAME} to say which belong together")
    if TORCH_INDEX_NAME in names:
        return "index", TORCH_INDEX_NAME
    if TORCH_SINGLE in names:
        return "single", TORCH_SINGLE
    if len(pickles) == 1:
        return "single", pickles[0]
    if pickles:
        raise CheckpointError(
            where, f"{len(pickles)} pickled weight files ({', '.join(pickles[:4])}) and no {TORCH_INDEX_NAME} to say which to read"
        )
    raise CheckpointError(where, "no weights found (no .safetensors file or index)")


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
        f_tensors, f_meta = read_weights(fpath)
        meta.update(f_meta)
        for name, info in f_tensors.items():
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
    """Open `path`: a directory, a `.safetensors` or torch zip file, an index json, a config.json
    beside weights — or, when no such path exists, a Hub id `org/name[@revision]`."""
    p = Path(path)
    if not p.exists():
        from .hub import hub_ref_or_none, missing_path_line, open_hub_checkpoint

        ref = hub_ref_or_none(os.fspath(path))
        if ref is not None:
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
        raise CheckpointError(root, "no config.json beside the weights (the engines need it to build the drafter)")
    config = read_json(config_path)
    return Checkpoint(root, config, config_path, tensors, files, storage, meta, pickles)

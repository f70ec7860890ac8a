"""What a checkpoint is made of, and how its files are put together: one path for a directory on disk and a
repository on the Hub (checkpoint/reader.py and checkpoint/hub.py both call it), so every structural check
(which files, which shard holds which tensor, nothing unlisted) applies to both. A leaf: it imports neither."""

from __future__ import annotations

import json
from collections.abc import Callable  # not typing: importing it costs the header-only commands ~2 ms
from pathlib import Path

from ..record import field, record
from .errors import CheckpointError
from .hubref import HubRef
from .safetensors import TensorInfo, read_header
from .source import LocalSource

MAX_CONFIG_BYTES = 16 * 1024 * 1024
MAX_INDEX_BYTES = 64 * 1024 * 1024
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")
INDEX_NAME = "model.safetensors.index.json"
TORCH_INDEX_NAME = "pytorch_model.bin.index.json"
TORCH_SINGLE = "pytorch_model.bin"


@record(frozen=False)
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
    hub: HubRef | None = None  # when opened from the Hub (repo, revision, commit)

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


def is_pickle(path: Path) -> bool:
    return path.suffix in PICKLE_SUFFIXES


def read_weights(path: Path) -> tuple[dict[str, TensorInfo], dict[str, str]]:
    """One weights file's tensors and metadata: a safetensors header, or a torch zip's pickle
    interpreted without running it."""
    if is_pickle(path):
        from .torchzip import read_torch_zip  # only for pickled weights: most checkpoints never need it

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


def shard_name_ok(name: str, where: str | Path) -> None:
    """A shard name from an index names a file inside the checkpoint: not empty, not absolute, no `..`."""
    if not name or "\x00" in name:
        raise CheckpointError(where, f"weight_map names an invalid file {name!r}")
    p = Path(name)
    if p.is_absolute() or ".." in p.parts:
        raise CheckpointError(where, f"weight_map file {name!r} points outside the checkpoint")


def weight_map_of(index: dict, where: str | Path) -> dict[str, str]:
    """An index's weight_map (tensor name -> shard file), refused unless it is one."""
    wmap = index.get("weight_map")
    if not isinstance(wmap, dict) or not wmap:
        raise CheckpointError(where, "no weight_map in the index")
    if set(map(type, wmap.values())) != {str}:  # one C-level pass over a target's ~100 k entries
        bad = next(v for v in wmap.values() if not isinstance(v, str))
        raise CheckpointError(where, f"weight_map names an invalid file {bad!r}")
    return wmap


ReadShard = Callable[[str], tuple[dict[str, TensorInfo], dict[str, str], Path]]


def assemble_shards(where: str | Path, index: dict, read_shard: ReadShard) -> tuple[dict[str, TensorInfo], list[Path], dict[str, str]]:
    """The tensors of a sharded checkpoint from its index: every listed shard read once (`read_shard` finds
    it, on disk or on the Hub, and refuses one that is not there), each tensor in exactly one shard, in the
    shard the index names, and no tensor the index does not list. `where` names the index in errors."""
    wmap = weight_map_of(index, where)
    tensors: dict[str, TensorInfo] = {}
    shard_of: dict[str, str] = {}  # tensor -> the shard it was found in
    files: list[Path] = []
    meta: dict[str, str] = {}
    for fname in dict.fromkeys(wmap.values()):
        found, found_meta, path = read_shard(fname)
        files.append(path)
        meta.update(found_meta)
        for name, info in found.items():
            if name in tensors:
                raise CheckpointError(path, f"tensor {name!r} appears in more than one shard")
            tensors[name], shard_of[name] = info, fname
    for name, fname in wmap.items():
        if name not in tensors:
            raise CheckpointError(where, f"index lists {name!r} in {fname!r} but that shard has no such tensor")
        if shard_of[name] != fname:
            raise CheckpointError(where, f"index puts {name!r} in {fname!r} but it is in {shard_of[name]!r}")
    extra = set(tensors) - set(wmap)
    if extra:
        raise CheckpointError(where, f"shards hold {len(extra)} tensor(s) the index does not list, e.g. {sorted(extra)[0]!r}")
    return tensors, files, meta

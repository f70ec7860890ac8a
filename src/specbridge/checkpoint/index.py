"""A target's tensor list from its index alone: config.json and model.safetensors.index.json (a single
model.safetensors: its header), on disk or on the Hub, with the bytes read counted. Shard headers are read
only when asked (`read_shard_header`; `read_shard_headers`: several at once over the Hub). A full target is
hundreds of shards: naming what it holds must not read them all (checkpoint/reader.py does, to check a drafter's
every tensor). A large Hub index may be read in part (index_search.py). Nothing here reads tensor data."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..record import field, record
from .assemble import INDEX_NAME, MAX_CONFIG_BYTES, MAX_INDEX_BYTES, choose_weights, read_json, shard_name_ok, weight_map_of
from .errors import CheckpointError
from .hubref import HubRef, hub_ref_or_none, missing_path_line
from .safetensors import SafetensorsHeader, TensorInfo, read_header

SINGLE_NAME = "model.safetensors"
PARTIAL_FROM_BYTES = 1 << 20  # a Hub index above this is searched by range reads when the caller names what it needs
# config -> (prefixes, exact names) the caller needs from the weight_map and prefixes whose presence means the
# part is not enough (a layer past those announced), or why it needs all of it
Wanted = Callable[[dict], "tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | str"]


@record(frozen=False)
class TargetIndex:
    """What a target's index says, and what reading it cost. `weight_map`: tensor name -> shard file (the
    single file's name for an unsharded target, whose header is already in `single`)."""

    path: str  # the directory, or `org/name@commit` for a Hub id
    config: dict
    weight_map: dict[str, str]
    storage: str  # "safetensors-sharded" | "safetensors"
    bytes_read: int = 0
    headers_read: int = 0
    hub: HubRef | None = None
    single: dict[str, TensorInfo] | None = None
    # shard file -> its parsed header and the bytes read for it (8 + header length); injected by the opener
    open_shard: Callable[[str], tuple[SafetensorsHeader, int]] | None = field(default=None, repr=False, compare=False)
    # True: `weight_map` holds only the entries under the names searched (a large Hub index read by ranges)
    partial: bool = False
    notes: list[str] = field(default_factory=list)  # how the index was read (and why not in part), for evidence

    @property
    def tensors(self) -> int | None:
        """Tensors in the index; None when it was read in part."""
        return None if self.partial else len(self.weight_map)

    @property
    def shards(self) -> int:
        """Shard files the entries read name (every one, unless partial)."""
        return len(set(self.weight_map.values()))


def read_shard_header(index: TargetIndex, shard: str) -> dict[str, TensorInfo]:
    """One shard's tensors from its header, counted in `index.bytes_read` / `headers_read`."""
    if index.single is not None:
        return index.single
    if index.open_shard is None:
        raise CheckpointError(index.path, "this index was built without a way to read its shards")
    shard_name_ok(shard, index.path)
    header, n = index.open_shard(shard)
    index.bytes_read += n
    index.headers_read += 1
    return header.tensors


def read_shard_headers(index: TargetIndex, shards: list[str]) -> dict[str, dict[str, TensorInfo]]:
    """Several shards' tensors, counted as read_shard_header counts them; over the Hub read concurrently (each
    header is two range reads, each a round trip)."""
    if index.single is not None or index.hub is None or len(shards) < 2:
        return {shard: read_shard_header(index, shard) for shard in shards}
    if index.open_shard is None:
        raise CheckpointError(index.path, "this index was built without a way to read its shards")
    from concurrent.futures import ThreadPoolExecutor

    for shard in shards:
        shard_name_ok(shard, index.path)
    with ThreadPoolExecutor(max_workers=min(8, len(shards))) as pool:
        got = list(pool.map(index.open_shard, shards))
    index.bytes_read += sum(n for _, n in got)
    index.headers_read += len(got)
    return {shard: header.tensors for shard, (header, _) in zip(shards, got, strict=True)}


def _file_size(p: Path) -> int:
    return p.stat().st_size


def _local(root: Path) -> TargetIndex:
    names = [f.name for f in root.iterdir() if f.is_file()]
    kind, name = choose_weights(names, root)
    if not (name == SINGLE_NAME or name.endswith(".safetensors.index.json") or name.endswith(".safetensors")):
        raise CheckpointError(root / name, "the index reader reads safetensors targets (a torch checkpoint has no header to read alone)")
    config_path = root / "config.json"
    if not config_path.is_file():
        raise CheckpointError(root, "no config.json beside the weights")
    config = read_json(config_path)
    read = _file_size(config_path)

    def open_shard(fname: str) -> tuple[SafetensorsHeader, int]:
        path = (root / fname).resolve()
        if not path.is_relative_to(root.resolve()):
            raise CheckpointError(root / INDEX_NAME, f"weight_map file {fname!r} resolves outside the target directory (symlink?)")
        if not path.is_file():
            raise CheckpointError(root / name, f"shard {fname!r} listed in the index does not exist")
        h = read_header(path)
        return h, 8 + h.header_len

    if kind == "index":
        index_path = root / name
        wmap = weight_map_of(read_json(index_path, MAX_INDEX_BYTES), index_path)
        return TargetIndex(str(root), config, wmap, "safetensors-sharded", read + _file_size(index_path), 0, open_shard=open_shard)
    h, n = open_shard(name)
    return TargetIndex(str(root), config, dict.fromkeys(h.tensors, name), "safetensors", read + n, 1, single=h.tensors)


def _partial_hub(ref: HubRef, name: str, listing, config: dict, wanted: Wanted | None, notes: list[str]):
    """The weight_map entries `wanted` names, searched by range reads of a large index that is not in the HF
    cache; None (with the reason in `notes`) when the whole index has to be read."""
    from .hub import cached_file, hub_file
    from .index_search import IndexSearchError, search_index

    size = listing.sizes.get(name)
    if wanted is None or size is None or size <= PARTIAL_FROM_BYTES or cached_file(ref, name) is not None:
        return None
    keys = wanted(config)
    if isinstance(keys, str):
        notes.append(f"{name} ({size} bytes) read whole: {keys}")
        return None
    prefixes, exact, stop = keys
    try:
        got = search_index(hub_file(ref, name, listing), (*prefixes, *stop), exact)
    except IndexSearchError as e:
        notes.append(f"{name} ({size} bytes) read whole: the range search gave up ({e})")
        return None
    beyond = sorted({p for p in stop for n in got.weight_map if n.startswith(p)})
    if beyond:
        notes.append(f"{name} ({size} bytes) read whole: it has entries under {', '.join(beyond)}, past what the config announces")
        return None
    return got


def _partial_note(name: str, got) -> str:
    total = got.metadata.get("total_size")
    return (
        f"{name} read in part: {len(got.weight_map)} entries under {', '.join(got.prefixes)} and "
        f"{', '.join(got.exact)}, by binary search in {got.reads} range read(s), {got.bytes_read} of {got.size} bytes; "
        f"names in order across the {got.checked} entries read; the index's tensor count is not known"
        + (f" (metadata total_size {total})" if isinstance(total, int) else "")
    )


def _hub(ref: HubRef, sharded_only: bool = False, wanted: Wanted | None = None) -> TargetIndex | None:
    from .hub import cached_file, hub_file, remote_header, resolve, small_file

    listing = resolve(ref)
    ref = listing.ref
    try:
        kind, name = choose_weights(listing.names, Path(ref.label))
    except CheckpointError:
        if sharded_only:
            return None
        raise
    if sharded_only and (kind != "index" or not name.endswith(".safetensors.index.json") or "config.json" not in listing.names):
        return None
    if not name.endswith(".safetensors") and not name.endswith(".safetensors.index.json"):
        raise CheckpointError(ref.label, "the index reader reads safetensors targets (a torch checkpoint has no header to read alone)")
    if "config.json" not in listing.names:
        raise CheckpointError(ref.label, "no config.json in the repository")
    config_path = small_file(ref, "config.json", listing, MAX_CONFIG_BYTES)
    config = read_json(config_path)
    read = _file_size(config_path)

    def open_shard(fname: str) -> tuple[SafetensorsHeader, int]:
        if fname not in listing.names:
            raise CheckpointError(f"{ref.label}/{name}", f"shard {fname!r} listed in the index does not exist")
        local = cached_file(ref, fname)
        h = read_header(local) if local is not None else remote_header(hub_file(ref, fname, listing))
        return h, 8 + h.header_len

    where = f"{ref.repo_id}@{ref.commit}"
    if kind == "index":
        notes: list[str] = []
        got = _partial_hub(ref, name, listing, config, wanted, notes)
        if got is not None:
            idx = TargetIndex(
                where, config, got.weight_map, "safetensors-sharded", read + got.bytes_read, 0, hub=ref, open_shard=open_shard
            )
            idx.partial, idx.notes = True, [_partial_note(name, got)]
            return idx
        index_path = small_file(ref, name, listing, MAX_INDEX_BYTES)
        wmap = weight_map_of(read_json(index_path, MAX_INDEX_BYTES), f"{ref.label}/{name}")
        idx = TargetIndex(where, config, wmap, "safetensors-sharded", read + _file_size(index_path), 0, hub=ref, open_shard=open_shard)
        idx.notes = notes
        return idx
    h, n = open_shard(name)
    return TargetIndex(where, config, dict.fromkeys(h.tensors, name), "safetensors", read + n, 1, hub=ref, single=h.tensors)


def read_target_index(path: str | os.PathLike) -> TargetIndex:
    """config.json and the index of a target: a directory (or its config.json / index file), or a Hub id."""
    p = Path(path)
    if p.exists():
        return _local(p if p.is_dir() else p.parent)
    ref = hub_ref_or_none(os.fspath(path))
    if ref is None:
        raise CheckpointError(os.fspath(path), missing_path_line(os.fspath(path)))
    got = _hub(ref)
    assert got is not None  # sharded_only=False always answers or raises
    return got


def index_first_or_none(path: str | os.PathLike, wanted: Wanted | None = None) -> TargetIndex | None:
    """The index of a safetensors target read before any shard header: a local directory (sharded, or its
    single file's header), or a sharded Hub repository (a single Hub file is left to the checkpoint reader,
    which reads the same header). None, having read no weights, for anything else. `wanted`: what the caller
    needs from a large Hub index, which is then searched by range reads rather than downloaded (a local
    index is read whole: it is fast)."""
    p = Path(path)
    if p.exists():
        if p.is_file() and not p.name.endswith(".safetensors.index.json") and p.name != "config.json":
            return None
        root = p if p.is_dir() else p.parent
        try:
            kind, name = choose_weights([f.name for f in root.iterdir() if f.is_file()], root)
        except (CheckpointError, OSError):
            return None
        if not name.endswith((".safetensors.index.json", ".safetensors")) or not (root / "config.json").is_file():
            return None
        return _local(root)
    ref = hub_ref_or_none(os.fspath(path))
    if ref is None:
        return None
    return _hub(ref, sharded_only=True, wanted=wanted)

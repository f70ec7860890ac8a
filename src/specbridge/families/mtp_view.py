"""The MTP head of a target as a checkpoint the engine rows can load: the head's tensors and the target's
top-level embedding and head (some MTP loaders read them), with dtypes and shapes from the headers of only the
shards that hold them. The rest of the target is the target's: never listed, never read."""

from __future__ import annotations

from pathlib import Path

from ..checkpoint.assemble import Checkpoint
from ..checkpoint.index import TargetIndex, read_shard_headers
from ..later import Later
from .mtp import MtpHead, head_prefixes

# the target's own tensors an MTP loader may read besides the head (vLLM's glm4_moe_mtp.py maps lm_head.weight to the
# first MTP layer's shared_head.head and reads model.embed_tokens.weight; deepseek_mtp.py reads the embedding from 0.32.0)
TARGET_SHARED = ("model.embed_tokens.weight", "lm_head.weight")
# names that say MTP in any layout; the head's winning layout may not hold them all (Qwen3-Next's mtp.fc and norms
# beside layers renamed to model.layers.N.*), and the engine reads what is there whichever layout won
MTP_NAMED = Later(r"(?:^|\.)mtp[._]")


def index_keys(config: dict) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | str:
    """What the head and its view need from a target's index (checkpoint.index.Wanted)."""
    got = head_prefixes(config)
    if isinstance(got, str):
        return got
    prefixes, beyond = got
    return prefixes, TARGET_SHARED, beyond


def mtp_view(index: TargetIndex, head: MtpHead) -> Checkpoint:
    """The head as a header-only checkpoint; every header read is counted in `index` and copied into `head`."""
    named = {n for n in index.weight_map if "mtp" in n and MTP_NAMED.search(n)}
    wanted = sorted({n for layer in head.layers for n in layer.tensors} | named | {n for n in TARGET_SHARED if n in index.weight_map})
    by_shard: dict[str, list[str]] = {}
    for name in wanted:
        by_shard.setdefault(index.weight_map[name], []).append(name)
    tensors = {}
    headers = read_shard_headers(index, sorted(by_shard))
    for shard, names in sorted(by_shard.items()):
        header = headers[shard]
        tensors |= {n: header[n] for n in names if n in header}
    head.bytes_read, head.headers_read = index.bytes_read, index.headers_read
    root = Path(index.path)
    files = sorted({t.file for t in tensors.values()})
    return Checkpoint(root, index.config, None, tensors, files, index.storage, hub=index.hub)
